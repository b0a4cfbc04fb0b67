[ check("the queue of the wrong apiVersion was not loaded"; queue("q-old") == null),
  check("the right one was"; queue("q-ok") != null)
]
