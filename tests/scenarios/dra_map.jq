[ check("the first job runs"; running("first-") == 1),
  check("the second waits on its queue: the mapped class counts as nvidia.com/gpu"; bound("second-") == 0),
  check("its reason names the queue and nvidia.com/gpu"; cond(pg("second-")).message | test("team-a.*nvidia.com/gpu")),
  check("team-a's allocation shows the device as nvidia.com/gpu"; gpus("team-a") == 1)
]
