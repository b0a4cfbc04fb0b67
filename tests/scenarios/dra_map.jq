[ check("the first job runs"; running("first-") == 1),
  check("the second waits on its queue: the mapped class counts as nvidia.com/gpu"; bound("second-") == 0),
  check("its reason names the queue and nvidia.com/gpu"; cond(pg("second-")).message | test("team-a.*nvidia.com/gpu")),
  check("and the devices it would take and what is free"; cond(pg("second-")).message | test("needs 1 device of class gpu.example.com \\(1 per pod\\); free: 3 on 1 node, at most 3 on one node$")),
  check("team-a's allocation shows the device as nvidia.com/gpu"; gpus("team-a") == 1)
]
