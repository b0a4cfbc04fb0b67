[ check("train-a's gang runs whole"; running("train-a-1-") == 8),
  check("train-b's gang runs whole"; running("train-b-1-") == 8),
  check("nlp's gang runs whole"; running("nlp-1-") == 4),
  check("train-a and train-b took from infer, their cousin under eng, not from vision: vision keeps one gang"; running("vision-2-") == 4 and gpus("vision") == 4),
  check("infer is down to its deserved 8"; gpus("infer") == 8),
  check("eng's status.allocated rolls up its subtree: 24"; gpus("eng") == 24),
  check("train's rolls up train-a and train-b: 16"; gpus("train") == 16),
  check("research's rolls up vision and nlp: 8"; gpus("research") == 8),
  check("every queue is at its deserved value";
        [.items[] | select(.kind == "Queue" and .spec.deserved != null and .metadata.name != "orphan")
         | (((.status.allocated["nvidia.com/gpu"]) // "0") | tonumber) == (.spec.deserved["nvidia.com/gpu"] | tonumber)] | all),
  check("eng's capability of 24 kept infer's fourth gang out at first";
        pg("infer-4-").status.phase == "Pending"),
  check("a job in eng waits: eng has child queues";
        (cond(pg("eng-1-")).message // "") | contains("queue eng has child queues")),
  check("a job in a queue whose parent does not exist waits, saying so";
        (cond(pg("orphan-1-")).message // "") | contains("queue orphan's parent nowhere does not exist")),
  check("every gang is whole or not started";
        [pgs | .status.running as $r | .spec.minMember as $m | ($r == 0 or $r >= $m)] | all)

  , check("the root queue's status.allocated is the cluster's 32"; gpus("root") == 32)
]
