[ check("exactly one pod runs"; ([pods | select(.status.phase == "Running")] | length) == 1),
  check("the first pod runs"; pod("gpu-smi-test").spec.nodeName == "gpu-node-01"),
  check("the second pod pends"; pod("gpu-smi-test-2").status.phase == "Pending" and pod("gpu-smi-test-2").spec.nodeName == null),
  check("the pending group names insufficient nvidia.com/gpu";
        [pgs | select(.status.phase != "Running") | cond(.).message | test("[Ii]nsufficient nvidia.com/gpu")] == [true])
]
