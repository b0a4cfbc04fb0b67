[ check("team-a gets 12 GPUs"; gpus("team-a") == 12),
  check("team-b gets 6 GPUs"; gpus("team-b") == 6),
  check("team-a deserved 12"; queue("team-a").status.deserved["nvidia.com/gpu"] == "12"),
  check("team-b deserved 6"; queue("team-b").status.deserved["nvidia.com/gpu"] == "6"),
  check("18 pods run"; ([pods | select(.status.phase == "Running")] | length) == 18)
]
