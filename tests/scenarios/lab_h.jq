[ check("the half-GPU pod was not loaded"; pod("half-gpu") == null),
  check("the group with an unknown queue pends and says so";
        cond(pg("lost-pg")).reason == "QueueNotFound" and (cond(pg("lost-pg")).message | test("team-nowhere"))),
  check("its pod is not placed"; pod("lost-0").spec.nodeName == null),
  check("minMember above the pods that exist is reported";
        cond(pg("too-big")).reason == "NotEnoughTasks" and (cond(pg("too-big")).message | test("valid: 1, min: 3"))),
  check("nothing of the too-big group is placed"; pod("too-big-0").spec.nodeName == null)
]
