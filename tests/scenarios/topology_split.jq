def nodes($p): [pods | select(.metadata.name | startswith($p)) | .spec.nodeName] | map(select(. != null)) | sort;
[ check("x finds no node in rack a, the fullest, and runs in rack b"; nodes("x-w-") == ["b1"] and running("x-w-") == 1),
  check("e starts in rack b, now the fullest with room"; nodes("e-w-") == ["b2"] and pg("e-").status.phase == "Running"),
  check("and grows only inside it: its other pods wait, rack c stays empty"; bound("e-w-") == 1 and ([pods | select(.spec.nodeName != null and (.spec.nodeName | startswith("c")))] | length) == 0)
]
