"""TRANCE's pages of the web app: the human test system (journal paper, appendix E) and the viewer."""
