def on($prefix; $node): [pods | select((.metadata.name | startswith($prefix)) and .spec.nodeName == $node)] | length;
[ check("team-a's first claim gang runs"; running("a-1-") == 2),
  check("its second waits: the queue's capability of 2 nvidia.com/gpu counts DRA devices"; bound("a-2-") == 0),
  check("and says so with the queue's numbers"; cond(pg("a-2-")).message | test("nvidia.com/gpu")),
  check("team-b's claim gang takes the other 6 devices"; running("b-dra-") == 6),
  check("no claim pod on the device-plugin node"; on("a-"; "dp-1") + on("b-dra-"; "dp-1") == 0),
  check("the device-plugin gang runs on the device-plugin node only"; running("b-plugin-") == 2 and on("b-plugin-"; "dp-1") == 2),
  check("team-a's allocation counts its 2 devices"; gpus("team-a") == 2),
  check("team-b's counts 6 devices and 2 plugin GPUs"; gpus("team-b") == 8)
]
