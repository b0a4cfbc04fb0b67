[ check("queue a's four gangs keep running, never evicted"; running("a-") == 4),
  check("b's gang waits: its queue deserves nothing, so it reclaims nothing"; bound("b-1-") == 0 and pg("b-1-").status.phase != "Running"),
  check("its reason says so"; (cond(pg("b-1-")).message // "") | contains("queue b deserves none of what the gang asks"))
]
