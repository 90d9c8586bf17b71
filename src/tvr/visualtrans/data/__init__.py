"""Making VisualTrans data: the construction pipeline of `tvr visualtrans build`."""
