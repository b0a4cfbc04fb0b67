def on($node): [pods | select((.metadata.name | startswith("train-")) and .spec.nodeName == $node)] | length;
[ check("the gang runs whole once the new slice is there"; running("train-") == 8 and pg("train").status.phase == "Running"),
  check("no node holds more claim pods than it has usable devices"; on("dra-1") <= 4 and on("dra-2") <= 1 and on("dra-3") <= 4),
  check("the new slice's node took the rest"; on("dra-3") >= 3)
]
