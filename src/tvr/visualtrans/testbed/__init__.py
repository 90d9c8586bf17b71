"""The VisualTrans testbed: rendered manipulation episodes with known truth, in EgoDex's layout,
and a scripted annotator that answers from that truth (`tvr visualtrans testbed`)."""
