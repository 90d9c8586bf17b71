"""TRANCE's result tables and plots for `tvr results` (Table 3, 4, 5, Fig. 7, 8), beside the papers'."""
