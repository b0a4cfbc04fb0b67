def unsupported($p): [(cond_all(pg($p)))[] | select(.type == "Unsupported")][0];
[ check("the vcjob's gang runs"; running("topo-") == 2),
  check("its PodGroup says what muster does not act on, by field";
        unsupported("topo-").message == "muster does not act on the vcjob's spec.tasks[1].dependsOn, the vcjob's spec.plugins.ray: the gang is scheduled as if they were not set"),
  check("with reason NotImplemented"; unsupported("topo-").reason == "NotImplemented"),
  check("a PodGroup's own subGroupPolicy is said too";
        unsupported("sub").message == "muster does not act on spec.subGroupPolicy: the gang is scheduled as if it were not set"),
  check("and its pod runs"; running("sub-0") == 1),
  check("a vcjob with nothing unsupported has no such condition"; unsupported("plain-") == null)
]
