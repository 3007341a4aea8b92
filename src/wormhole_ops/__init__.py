"""What both servers (the Mailbox server and the Transit relay) share for
their operators: the metrics and health site. The client never imports
this package."""
