def nodes($p): [pods | select(.metadata.name | startswith($p)) | .spec.nodeName] | sort;
[ check("soft runs although no rack holds it, across racks"; running("soft-w-") == 2 and nodes("soft-w-") == ["a2", "b2"]),
  check("hard (the same gang, mode hard) waits, placing nothing"; bound("hard-") == 0 and pg("hard-").status.phase == "Inqueue"),
  check("and says which tier, its need and the best rack's room"; cond(pg("hard-")).message | contains("networkTopology hard, highestTierAllowed 1: no HyperNode of tier <= 1 has room for the gang ({nvidia.com/gpu: 16} for 2 pods); the most free, rack-c (tier 1, 1 node), has {nvidia.com/gpu: 8} free"))
]
