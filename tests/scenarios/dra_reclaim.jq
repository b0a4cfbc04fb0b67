[ check("team-b's gang runs whole on reclaimed devices"; running("b-1-") == 4),
  check("team-a keeps one gang of 4 running"; running("a-") == 4),
  check("the gang reclaimed waits, and says no device is free"; cond(pg("a-2-")).message | test("needs 4 devices of class gpu.nvidia.com \\(1 per pod\\); none free$")),
  check("the queues split the 8 devices 4 and 4"; gpus("team-a") == 4 and gpus("team-b") == 4)
]
