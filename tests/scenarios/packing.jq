[ check("c fills the half-used gpu-2"; [pods | select(.metadata.name | startswith("c-w-")) | .spec.nodeName] == ["gpu-2", "gpu-2", "gpu-2", "gpu-2"]),
  check("so the 2 x 8-GPU gang finds two whole nodes and runs"; running("d-w-") == 2 and pg("d-").status.phase == "Running"),
  check("on gpu-1 and gpu-3"; [pods | select(.metadata.name | startswith("d-w-")) | .spec.nodeName] | sort == ["gpu-1", "gpu-3"])
]
