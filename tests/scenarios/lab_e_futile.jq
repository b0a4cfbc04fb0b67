[ check("team-a keeps all 16 GPUs"; gpus("team-a") == 16),
  check("nothing was evicted: 16 team-a pods still run"; running("team-a-job-") == 16),
  check("team-b's gang waits whole"; running("team-b-h100-") == 0),
  check("team-b's reason names the selector"; cond(pg("team-b-h100")).message | test("node affinity/selector"))
]
