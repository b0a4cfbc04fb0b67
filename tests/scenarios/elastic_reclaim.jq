[ check("team-a is back at 12 GPUs"; gpus("team-a") == 12),
  check("team-b reclaimed its 6 GPUs"; gpus("team-b") == 6),
  check("18 pods run"; ([pods | select(.status.phase == "Running")] | length) == 18),
  check("team-b's sweep runs 6"; running("team-b-sweep") == 6)
]
