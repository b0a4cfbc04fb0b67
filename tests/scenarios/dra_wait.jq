[ check("the gang waits whole: no pod bound"; bound("train-") == 0 and pg("train").status.phase != "Running"),
  check("its reason says 8 devices needed, 5 free, at most 4 on one node";
        cond(pg("train")).message | test("needs 8 devices of class gpu.example.com \\(1 per pod\\); free: 5 on 2 nodes, at most 4 on one node")),
  check("and that nodes cannot allocate all claims"; cond(pg("train")).message | test("cannot allocate all claims"))
]
