"""Two advisors, one writer: leader election around each cycle, the state the
leader keeps in ZooKeeper, every advisor's journal in one read, and the HA
status.
"""
