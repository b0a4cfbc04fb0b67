[ check("queue a's four gangs keep running, never evicted"; running("a-") == 4),
  check("b's gang waits: reclaim does nothing without a share plugin"; bound("b-1-") == 0 and pg("b-1-").status.phase != "Running")
]
