[ check("nine pods exist"; ([pods] | length) == 9),
  check("no pod is placed"; ([pods | select(.spec.nodeName != null)] | length) == 0),
  check("the podgroup waits"; (pg("pytorch-dist-8gpu").status.phase | IN("Pending", "Inqueue"))),
  check("minMember is 9"; pg("pytorch-dist-8gpu").spec.minMember == 9),
  check("the reason says the gang needs 8 GPUs and 5 are free";
        cond(pg("pytorch-dist-8gpu")).message | test("nvidia.com/gpu: 8.*nvidia.com/gpu: 5")),
  check("the reason is Volcano's"; cond(pg("pytorch-dist-8gpu")).reason == "NotEnoughResources"
        and cond(pg("pytorch-dist-8gpu")).type == "Unschedulable")
]
