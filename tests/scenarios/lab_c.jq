[ check("one gang runs whole"; [running("train-a-"), running("train-b-")] | sort == [0, 8]),
  check("no gang is partial"; ([pods | select(.spec.nodeName != null)] | length) == 8),
  check("one podgroup Running, the other waiting";
        ([pgs | .status.phase] | sort) as $p | $p == ["Inqueue", "Running"] or $p == ["Pending", "Running"]),
  check("the waiting one says why, with GPU numbers";
        [pgs | select(.status.phase != "Running") | cond(.).message | test("nvidia.com/gpu.*8 requested")] == [true])
]
