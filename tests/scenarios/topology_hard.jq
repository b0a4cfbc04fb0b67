def nodes($p): [pods | select(.metadata.name | startswith($p)) | .spec.nodeName] | sort;
[ check("t (hard, tier 1) runs whole in rack b, the one rack with room"; nodes("t-w-") == ["b1", "b2"] and pg("t-").status.phase == "Running"),
  check("big (3 x 8 GPUs, tier 1) is not admitted: no rack could ever hold it"; pg("big-").status.phase == "Pending" and bound("big-") == 0),
  check("its reason names the tier, its need and the largest rack"; cond(pg("big-")).message | contains("can never run in one HyperNode of tier <= 1 (networkTopology hard): its 3 pods ask 24 nvidia.com/gpu, the most any such HyperNode has is 16 (rack-a)")),
  check("the PodGroup made from t's vcjob carries its networkTopology"; pg("t-").spec.networkTopology == {"mode": "hard", "highestTierAllowed": 1}),
  check("wide (highestTierName rack) packs into rack a, beside busy"; nodes("wide-w-") == ["a1", "a2"] and pg("wide-").status.phase == "Running")
]
