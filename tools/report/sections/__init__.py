"""The report's sections, one module each: its numbers, its markdown (`markdown(...)`,
the `Section`s it adds to the summary) and, when the page shows it, its part of the
page's data (`page(...)`). `markdown.build` lists the summary's sections in reading
order, `page.page_data` the page's parts; what several sections share is in `tally.py`
(the numbers) and `common.py` (names, cells, the page's values)."""
