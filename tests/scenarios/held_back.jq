[ check("the gang admitted first waits on the node it asks for"; pg("z-first-").status.phase == "Inqueue"),
  check("the gang behind it is held back"; pg("a-second-").status.phase == "Pending" and bound("a-second-") == 0),
  check("and its reason names the gang ahead, with what it holds";
        cond(pg("a-second-")).message | test("would reach 24 of the cluster's 16; admitted ahead of it and waiting for room: default/z-first-[0-9a-f-]+ \\(8 nvidia.com/gpu\\)$"))
]
