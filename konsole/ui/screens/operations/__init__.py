"""The screens of an operator's work on the cluster: rebalance (``rebalance``), cluster
configs (``configs``) and the rolling upgrade to the 1.0 line (``upgrade``).
"""
