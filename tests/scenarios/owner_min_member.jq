[ check("one PodGroup"; ([pgs] | length) == 1),
  check("named for the ReplicaSet's uid";
        pg("podgroup-").metadata.name ==
        "podgroup-0d6a1f7e-0000-4000-8000-00000000a001"),
  check("minMember from the owner's annotation";
        pg("podgroup-").spec.minMember == 3),
  check("minResources for three pods";
        pg("podgroup-").spec.minResources["nvidia.com/gpu"] == "3"),
  check("the three pods run"; running("trainer-") == 3),
  check("the podgroup runs"; pg("podgroup-").status.phase == "Running")
]
