"""Phone numbers: a port of phonenumbers' ``PhoneNumberMatcher`` at leniency VALID and of the parsing and
validation code it calls (phonenumbers 9.0, Apache-2.0, itself a port of Google's libphonenumber), on the
numbering-plan metadata in :mod:`inferwatch.redaction._data`. Names follow the original so the two can be read
side by side.

:mod:`.patterns`: the matcher's regular expressions; :mod:`.plans`: one region's numbering plan;
:mod:`.parse`: ``parse`` and ``is_valid_number``; :mod:`.regions`: which regions a national-format number may be
valid in; :mod:`.matcher`: the matcher over one text for several regions.
"""
