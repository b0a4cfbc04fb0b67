[ check("one PodGroup"; ([pgs] | length) == 1),
  check("minMember from the owner's annotation";
        pg("podgroup-").spec.minMember == 3),
  check("no pod is bound"; bound("trainer-") == 0),
  check("the podgroup is not running";
        pg("podgroup-").status.phase != "Running"),
  check("it says why: 2 pods of 3";
        cond(pg("podgroup-")).type == "Unschedulable" and
        cond(pg("podgroup-")).reason == "NotEnoughTasks" and
        (cond(pg("podgroup-")).message | test("valid: 2, min: 3")))
]
