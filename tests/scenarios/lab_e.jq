[ check("team-b's gang runs whole"; running("team-b-train-") == 6),
  check("team-a is back at its deserved 12"; gpus("team-a") == 12),
  check("team-b holds 6"; gpus("team-b") == 6),
  check("every team-a gang is whole or waiting whole";
        [pgs | select(.metadata.name | startswith("team-a-job")) | .status.running] | all(. == 0 or . == 2)),
  check("team-b's podgroup is Running"; pg("team-b-train").status.phase == "Running")
]
