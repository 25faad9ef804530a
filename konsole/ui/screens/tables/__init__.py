"""The tables' screens: the Tables mode (``screen``, rows in ``rows``), one table's detail
(``detail``, with its Storage tab ``storage_tab``), the Storage mode (``storage``: a row per
table) and the preview of a table's rows (``preview``).
"""
