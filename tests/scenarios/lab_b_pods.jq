[ check("five pods placed"; ([pods | select(.spec.nodeName != null)] | length) == 5),
  check("three pods pend"; ([pods | select(.status.phase == "Pending")] | length) == 3)
]
