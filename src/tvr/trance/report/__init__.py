"""`tvr report`: a dataset's balance plots, Table 8, the order-sensitive share and examples page."""
