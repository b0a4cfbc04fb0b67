[ check("the 1g.5gb pod lands on the 1g.5gb node"; pod("mig-inference").spec.nodeName == "mig-node-1"),
  check("the 3g.20gb pod lands on the 3g.20gb node"; pod("mig-training").spec.nodeName == "mig-node-2"),
  check("a selector no node matches pends"; pod("mig-wrong-product").spec.nodeName == null),
  check("and its group says the selector rules nodes out";
        [pgs | select(.status.phase != "Running") | cond(.).message | test("2 node\\(s\\) didn't match Pod's node affinity/selector")] == [true])
]
