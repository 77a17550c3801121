"""This machine as EdgeDesk measures it: edgedesk doctor and edgedesk bench.

Both run through the composition root, so their figures are the product's own paths.
"""
