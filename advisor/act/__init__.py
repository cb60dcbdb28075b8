"""Acting: the actuator (the only writer to the RM, with its guardrails), the
journal it writes before and after each write, and which levers an RM can
honour.
"""
