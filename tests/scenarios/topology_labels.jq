def nodes($p): [pods | select(.metadata.name | startswith($p)) | .spec.nodeName] | sort;
[ check("t (hard, tier 1) runs whole in rack b of the label tree"; nodes("t-w-") == ["b1", "b2"] and pg("t-").status.phase == "Running"),
  check("big is refused, naming the label's domain"; pg("big-").status.phase == "Pending" and (cond(pg("big-")).message | contains("the most any such HyperNode has is 16 (example.com/rack=a)")))
]
