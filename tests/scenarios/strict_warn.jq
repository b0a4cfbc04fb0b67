[ check("a misspelt weight is warned and ignored: team keeps weight 1"; queue("team").spec.weight == 1),
  check("the job with misspelt fields still runs (a warning only)"; running("typo-job-w-") == 2),
  check("its pods ask no GPU: limit: is not limits:"; gpus("team") == 0),
  check("a request above its limit is refused"; pod("over-request") == null),
  check("an unknown priorityClassName is refused"; pod("no-such-class") == null),
  check("a negative minMember is refused"; pg("negative") == null)
]
