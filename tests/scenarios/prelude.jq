# Helpers for scenario checks. Each check is check(name; condition): it
# yields name when the condition is false, so a scenario is [ check(...), ... ]
# and passes when that array is empty.
def check($name; cond): if cond then empty else $name end;
def pgs: .items[] | select(.kind == "PodGroup");
def pg($prefix): [pgs | select(.metadata.name | startswith($prefix))][0];
def pods: .items[] | select(.kind == "Pod");
def pod($name): [pods | select(.metadata.name == $name)][0];
def queue($name): [.items[] | select(.kind == "Queue" and .metadata.name == $name)][0];
def bound($prefix): [pods | select((.metadata.name | startswith($prefix)) and .spec.nodeName != null)] | length;
def running($prefix): [pods | select((.metadata.name | startswith($prefix)) and .status.phase == "Running")] | length;
def cond($pg): ($pg.status.conditions // [])[0];
def gpus($q): ((queue($q).status.allocated["nvidia.com/gpu"]) // "0") | tonumber;
def cond_all($pg): $pg.status.conditions // [];
