[ check("three pods exist"; ([pods] | length) == 3),
  check("all three are placed, the BestEffort master too"; bound("mpi-") == 3),
  check("the master is placed"; pod("mpi-master-0").spec.nodeName != null),
  check("the podgroup runs"; pg("mpi").status.phase == "Running")
]
