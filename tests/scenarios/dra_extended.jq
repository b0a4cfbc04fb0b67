def on($p; $node): [pods | select((.metadata.name | startswith($p)) and .spec.nodeName == $node)] | length;
def alln($node): on("plain-"; $node) + on("more-"; $node);
[ check("the gang of 8 plain-GPU pods runs on DRA devices and plugin GPUs"; running("plain-") == 8),
  check("no node holds more GPU pods than it has GPUs or devices"; alln("dra-1") <= 4 and alln("dra-2") <= 4 and alln("dp-1") <= 2),
  check("the DRA-only nodes were used"; on("plain-"; "dra-1") + on("plain-"; "dra-2") >= 6),
  check("the gang of 4 more waits: 2 GPUs are left"; bound("more-") == 0)
]
