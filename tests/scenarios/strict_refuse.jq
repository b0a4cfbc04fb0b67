[ check("--strict: the queue with a misspelt field is not loaded"; queue("team") == null),
  check("--strict: nor the job"; pg("typo-job") == null and pod("typo-job-w-0") == null),
  check("what has no unknown field still loads: the PodGroup refused for its value, not for a field"; pg("negative") == null and queue("default") != null)
]
