"""The data model every layer shares: the frozen Snapshot of the cluster, how
one is assembled from parsed parts, and recommendations.
"""
