[ check("the job made first (z-first, at 10 s) runs when the node frees"; running("z-first-") == 1),
  check("the one made later but first by name (a-second, at 20 s) waits"; bound("a-second-") == 0),
  check("and says why, with the GPU numbers";
        cond(pg("a-second-")).message | test("nvidia.com/gpu.*8 \\+ 8 requested"))
]
