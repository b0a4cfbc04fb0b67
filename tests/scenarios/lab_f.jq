[ check("the high-priority gang runs whole"; running("urgent-high-") == 8),
  check("the low-priority gang waits whole"; running("batch-low-") == 0 and ([pods | select((.metadata.name | startswith("batch-low-")) and .status.phase == "Pending")] | length) == 8),
  check("the low-priority podgroup says why"; cond(pg("batch-low")).type == "Unschedulable")
]
