[ check("the 2 x 8-GPU gang behind the job that never fits runs whole"; running("b-pair-") == 2),
  check("the 16-GPU job is not admitted"; pg("a-huge-").status.phase == "Pending"),
  check("and says it can never run, with the numbers";
        cond(pg("a-huge-")).message | test("can never run on this cluster's nodes: pod default/a-huge-w-0 asks 16 nvidia.com/gpu, the most any node has is 8")),
  check("a job past its queue's capability is not admitted"; pg("c-wide-").status.phase == "Pending"),
  check("and names the queue and both numbers";
        cond(pg("c-wide-")).message | test("can never run in queue team-b: its minResources ask 8 nvidia.com/gpu, the queue's capability is 4")),
  check("nothing of them is bound"; bound("a-huge-") + bound("c-wide-") == 0),
  check("a job whose pods that fit are enough for minMember runs them";
        running("d-master-master-") == 1 and pg("d-master-").status.phase == "Running"),
  check("its worker that never fits stays unbound"; bound("d-master-worker-") == 0)
]
