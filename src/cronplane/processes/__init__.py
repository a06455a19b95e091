"""The long-running parts of a node: the dispatcher (and its fire lanes), the workers
(item runner, recorder, heartbeat), the alert loop, and the node that runs them together
(`cronplane serve`, `dispatcher`, `worker`)."""
