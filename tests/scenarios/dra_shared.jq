def on($node): [pods | select((.metadata.name | startswith("train-")) and .spec.nodeName == $node)] | length;
[ check("the gang sharing one claim runs"; running("train-") == 4),
  check("all of it on one node, where the claim's device is"; on("dra-1") == 4 or on("dra-2") == 4)
]
