[ check("the gang starts in rack a"; pod("t-w-0").spec.nodeName == "a1" and pg("t-").status.phase == "Running"),
  check("its BestEffort helper is not placed in rack b"; pod("t-z-be-0").spec.nodeName == null),
  check("nor its elastic worker"; pod("t-w-1").spec.nodeName == null)
]
