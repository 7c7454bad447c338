//! A list's pager: numbered pages around the current one, previous and next, and the page
//! sizes a reader may choose; one for every paged list of the console.

/// The page sizes a list offers.
pub(super) const PAGE_SIZES: [i64; 4] = [10, 20, 50, 100];

/// Pages linked on each side of the current one (the first and last are always linked).
const AROUND: i64 = 2;

/// One numbered link; `href` is `None` for the page shown.
pub(super) struct PageLink {
    pub number: i64,
    pub href: Option<String>,
    /// A gap (`…`) comes before this link.
    pub gap_before: bool,
}

/// One page-size choice; `current` for the size shown.
pub(super) struct SizeLink {
    pub size: i64,
    pub href: String,
    pub current: bool,
}

/// What `pager.html` shows.
pub(super) struct Pager {
    /// The count of matching rows, as said (`10000+` past a list's counting cap).
    pub total: String,
    pub prev: Option<String>,
    pub next: Option<String>,
    pub pages: Vec<PageLink>,
    /// A gap after the last numbered link: more pages whose number is not known.
    pub gap_after: bool,
    pub sizes: Vec<SizeLink>,
}

/// Where a list stands: the page and size shown, and what is known of its length.
pub(super) struct Position {
    pub page: i64,
    pub size: i64,
    /// The number of rows when counted exactly; `None` past a counting cap.
    pub total: Option<i64>,
    /// Whether a page follows (what is known past a counting cap).
    pub more: bool,
}

/// The page size a request asked for: one of [`PAGE_SIZES`], else `default`.
pub(super) fn page_size(asked: &str, default: i64) -> i64 {
    asked
        .trim()
        .parse()
        .ok()
        .filter(|s| PAGE_SIZES.contains(s))
        .unwrap_or(default)
}

/// The page a request asked for: 1 or more, else 1.
pub(super) fn page_number(asked: &str) -> i64 {
    asked.trim().parse().ok().filter(|p| *p >= 1).unwrap_or(1)
}

impl Pager {
    /// The pager of a list at `at`, with `href(page, size)` linking to any page at any size;
    /// `total` is what the page says of the count.
    pub(super) fn new(at: Position, total: String, href: impl Fn(i64, i64) -> String) -> Pager {
        let (page, size) = (at.page, at.size);
        let last = at.total.map(|n| ((n + size - 1) / size).max(1));
        // with no count, the known pages end at the next one
        let known_last = last.unwrap_or(page + i64::from(at.more));
        let mut numbers: Vec<i64> = vec![1];
        numbers.extend((page - AROUND).max(2)..=(page + AROUND).min(known_last));
        if last.is_some() && known_last > 1 {
            numbers.push(known_last);
        }
        numbers.sort_unstable();
        numbers.dedup();
        let mut pages = Vec::with_capacity(numbers.len());
        let mut previous = 0;
        for number in numbers {
            pages.push(PageLink {
                number,
                href: (number != page).then(|| href(number, size)),
                gap_before: number > previous + 1,
            });
            previous = number;
        }
        let next = match last {
            Some(last) => page < last,
            None => at.more,
        };
        Pager {
            total,
            prev: (page > 1).then(|| href(page - 1, size)),
            next: next.then(|| href(page + 1, size)),
            gap_after: last.is_none() && at.more,
            pages,
            sizes: PAGE_SIZES
                .iter()
                .map(|&s| SizeLink {
                    size: s,
                    href: href(1, s),
                    current: s == size,
                })
                .collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn numbers(p: &Pager) -> Vec<String> {
        p.pages
            .iter()
            .map(|l| {
                let gap = if l.gap_before { "… " } else { "" };
                let here = if l.href.is_none() { "*" } else { "" };
                format!("{gap}{}{here}", l.number)
            })
            .collect()
    }

    fn at(page: i64, total: Option<i64>, more: bool) -> Pager {
        let position = Position {
            page,
            size: 20,
            total,
            more,
        };
        Pager::new(position, "n".into(), |p, s| format!("?page={p}&size={s}"))
    }

    #[test]
    fn pages_around_the_current_one_and_both_ends() {
        assert_eq!(numbers(&at(1, Some(0), false)), ["1*"]);
        assert_eq!(numbers(&at(1, Some(45), false)), ["1*", "2", "3"]);
        assert_eq!(
            numbers(&at(10, Some(400), false)),
            ["1", "… 8", "9", "10*", "11", "12", "… 20"]
        );
        assert_eq!(
            numbers(&at(20, Some(400), false)),
            ["1", "… 18", "19", "20*"]
        );
        let middle = at(10, Some(400), false);
        assert_eq!(middle.prev.as_deref(), Some("?page=9&size=20"));
        assert_eq!(middle.next.as_deref(), Some("?page=11&size=20"));
        assert!(at(20, Some(400), false).next.is_none());
        assert!(at(1, Some(400), false).prev.is_none());
    }

    #[test]
    fn an_uncounted_list_links_only_the_pages_it_knows() {
        let capped = at(600, None, true);
        assert_eq!(numbers(&capped), ["1", "… 598", "599", "600*", "601"]);
        assert!(capped.gap_after && capped.next.is_some());
        let end = at(600, None, false);
        assert_eq!(numbers(&end), ["1", "… 598", "599", "600*"]);
        assert!(!end.gap_after && end.next.is_none());
    }

    #[test]
    fn sizes_start_again_at_page_one_and_odd_asks_fall_back() {
        let p = at(3, Some(100), false);
        let sizes: Vec<(i64, &str, bool)> = p
            .sizes
            .iter()
            .map(|s| (s.size, s.href.as_str(), s.current))
            .collect();
        assert_eq!(sizes[0], (10, "?page=1&size=10", false));
        assert_eq!(sizes[1], (20, "?page=1&size=20", true));
        assert_eq!(page_size("50", 20), 50);
        for odd in ["", "7", "-10", "1000000", "x"] {
            assert_eq!(page_size(odd, 20), 20, "{odd}");
        }
        assert_eq!(page_number("0"), 1);
        assert_eq!(page_number(" 4 "), 4);
    }
}
