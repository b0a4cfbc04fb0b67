def job($name): [.items[] | select(.kind == "Job" and .metadata.name == $name)][0];
[ check("the vcjob is in the list, Completed, with its PodGroup"; job("first").status.state.phase == "Completed" and (job("first").status.podGroup | startswith("default/first-")) and job("first").status.succeeded == 1),
  check("its shape: minAvailable and tasks"; job("first").spec.minAvailable == 1 and job("first").spec.tasks == [{"name": "w", "replicas": 1}]),
  check("pods carry their start time"; pod("first-w-0").status.startTime == "2026-01-01T00:00:00Z" and pod("second-0").status.startTime == "2026-01-01T00:10:00Z"),
  check("a gang that started at once waited 0 s"; pg("first-").status.waitSeconds == 0 and pg("first-").status.startTime == "2026-01-01T00:00:00Z"),
  check("the one behind it waited from its creation (1 s) to 10 min"; pg("second").status.waitSeconds == 599 and pg("second").status.startTime == "2026-01-01T00:10:00Z")
]
